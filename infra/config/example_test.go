package config_test

import (
	"flag"
	"fmt"
	"os"

	"github.com/xbot-runtime/xbot/infra/config"
)

func Example() {
	fs := flag.NewFlagSet("xbot", flag.ContinueOnError)
	setFlags := config.BindFlags(fs)
	if err := fs.Parse([]string{"--api-addr", ":8081"}); err != nil {
		panic(err)
	}
	r, err := config.Load(config.Sources{
		Flags:   setFlags(),
		Env:     map[string]string{"XBOT_PG_DSN": "postgres://xbot:pw@db/xbot", "XBOT_KAFKA_BROKERS": "k1:9092,k2:9092"},
		WorkDir: "/nonexistent/work", // no ./.env
		HomeDir: "/nonexistent/home", // no ~/.xbot
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Get("api_addr"), r.List("kafka_brokers"))
	if err := r.Explain(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// :8081 [k1:9092 k2:9092]
	// KEY                            VALUE            LAYER    VARIABLE                            ORIGIN
	// agents_file                    (unset)          default  XBOT_AGENTS_FILE                    default
	// api_addr                       :8081            flag     XBOT_API_ADDR                       --api-addr
	// api_cors_credentials           false            default  XBOT_API_CORS_CREDENTIALS           default
	// api_cors_origins               (unset)          default  XBOT_API_CORS_ORIGINS               default
	// api_idle_timeout               60s              default  XBOT_API_IDLE_TIMEOUT               default
	// api_jwt_audience               (unset)          default  XBOT_API_JWT_AUDIENCE               default
	// api_jwt_hs256_secret           (unset)          default  XBOT_API_JWT_HS256_SECRET           default
	// api_jwt_issuer                 (unset)          default  XBOT_API_JWT_ISSUER                 default
	// api_jwt_public_key_file        (unset)          default  XBOT_API_JWT_PUBLIC_KEY_FILE        default
	// api_max_concurrent_writes      0                default  XBOT_API_MAX_CONCURRENT_WRITES      default
	// api_max_conns                  4096             default  XBOT_API_MAX_CONNS                  default
	// api_max_header_bytes           65536            default  XBOT_API_MAX_HEADER_BYTES           default
	// api_max_streams                2048             default  XBOT_API_MAX_STREAMS                default
	// api_max_streams_per_principal  32               default  XBOT_API_MAX_STREAMS_PER_PRINCIPAL  default
	// api_public_url                 (unset)          default  XBOT_API_PUBLIC_URL                 default
	// api_read_header_timeout        10s              default  XBOT_API_READ_HEADER_TIMEOUT        default
	// api_stream_appear_wait         2s               default  XBOT_API_STREAM_APPEAR_WAIT         default
	// api_tokens                     (unset)          default  XBOT_API_TOKENS                     default
	// api_write_timeout              30s              default  XBOT_API_WRITE_TIMEOUT              default
	// clickhouse_addr                (unset)          default  XBOT_CLICKHOUSE_ADDR                default
	// clickhouse_database            xbot             default  XBOT_CLICKHOUSE_DATABASE            default
	// clickhouse_password            (unset)          default  XBOT_CLICKHOUSE_PASSWORD            default
	// clickhouse_projector_linger    500ms            default  XBOT_CLICKHOUSE_PROJECTOR_LINGER    default
	// clickhouse_user                default          default  XBOT_CLICKHOUSE_USER                default
	// command_signing_key            (unset)          default  XBOT_COMMAND_SIGNING_KEY            default
	// command_wait_default           5s               default  XBOT_COMMAND_WAIT_DEFAULT           default
	// command_wait_max               30s              default  XBOT_COMMAND_WAIT_MAX               default
	// compute_dir                    (unset)          default  XBOT_COMPUTE_DIR                    default
	// compute_provider               auto             default  XBOT_COMPUTE_PROVIDER               default
	// data_dir                       (unset)          default  XBOT_DATA_DIR                       default
	// dev_kafka                      kfake            default  XBOT_DEV_KAFKA                      default
	// dev_kafka_addr                 127.0.0.1:9092   default  XBOT_DEV_KAFKA_ADDR                 default
	// events_page_max_bytes          1048576          default  XBOT_EVENTS_PAGE_MAX_BYTES          default
	// executor_id                    (unset)          default  XBOT_EXECUTOR_ID                    default
	// executor_remember_finished     168h             default  XBOT_EXECUTOR_REMEMBER_FINISHED     default
	// im_addr                        127.0.0.1:8086   default  XBOT_IM_ADDR                        default
	// im_agent                       demo             default  XBOT_IM_AGENT                       default
	// im_api_url                     (unset)          default  XBOT_IM_API_URL                     default
	// im_endpoints                   (unset)          default  XBOT_IM_ENDPOINTS                   default
	// im_media_dir                   (unset)          default  XBOT_IM_MEDIA_DIR                   default
	// im_shell_isolation             (unset)          default  XBOT_IM_SHELL_ISOLATION             default
	// kafka_brokers                  k1:9092,k2:9092  env      XBOT_KAFKA_BROKERS                  XBOT_KAFKA_BROKERS
	// kafka_group_prefix             (unset)          default  XBOT_KAFKA_GROUP_PREFIX             default
	// kafka_partitions               12               default  XBOT_KAFKA_PARTITIONS               default
	// kafka_replication_factor       -1               default  XBOT_KAFKA_REPLICATION_FACTOR       default
	// kafka_sasl_mechanism           (unset)          default  XBOT_KAFKA_SASL_MECHANISM           default
	// kafka_sasl_password            (unset)          default  XBOT_KAFKA_SASL_PASSWORD            default
	// kafka_sasl_username            (unset)          default  XBOT_KAFKA_SASL_USERNAME            default
	// kafka_tls                      false            default  XBOT_KAFKA_TLS                      default
	// kafka_tls_ca_file              (unset)          default  XBOT_KAFKA_TLS_CA_FILE              default
	// kafka_tls_cert_file            (unset)          default  XBOT_KAFKA_TLS_CERT_FILE            default
	// kafka_tls_key_file             (unset)          default  XBOT_KAFKA_TLS_KEY_FILE             default
	// kafka_tls_server_name          (unset)          default  XBOT_KAFKA_TLS_SERVER_NAME          default
	// kafka_topic_prefix             (unset)          default  XBOT_KAFKA_TOPIC_PREFIX             default
	// kafka_transaction_version      1                default  XBOT_KAFKA_TRANSACTION_VERSION      default
	// llm_api_key                    (unset)          default  XBOT_LLM_API_KEY                    default
	// llm_base_url                   (unset)          default  XBOT_LLM_BASE_URL                   default
	// llm_model                      (unset)          default  XBOT_LLM_MODEL                      default
	// log_format                     (unset)          default  XBOT_LOG_FORMAT                     default
	// log_level                      info             default  XBOT_LOG_LEVEL                      default
	// mcp_secrets                    (unset)          default  XBOT_MCP_SECRETS                    default
	// mcp_secrets_file               (unset)          default  XBOT_MCP_SECRETS_FILE               default
	// metrics_addr                   127.0.0.1:9464   default  XBOT_METRICS_ADDR                   default
	// pg_dsn                         ***redacted***   env      XBOT_PG_DSN                         XBOT_PG_DSN
	// projector_max_batch            10000            default  XBOT_PROJECTOR_MAX_BATCH            default
	// projector_max_batch_bytes      8388608          default  XBOT_PROJECTOR_MAX_BATCH_BYTES      default
	// sandbox_cgroup_parent          (unset)          default  XBOT_SANDBOX_CGROUP_PARENT          default
	// sandbox_cpu_millis             1000             default  XBOT_SANDBOX_CPU_MILLIS             default
	// sandbox_gid                    65200            default  XBOT_SANDBOX_GID                    default
	// sandbox_limits                 auto             default  XBOT_SANDBOX_LIMITS                 default
	// sandbox_max_per_tenant         8                default  XBOT_SANDBOX_MAX_PER_TENANT         default
	// sandbox_max_total              64               default  XBOT_SANDBOX_MAX_TOTAL              default
	// sandbox_memory_mib             1024             default  XBOT_SANDBOX_MEMORY_MIB             default
	// sandbox_pids                   256              default  XBOT_SANDBOX_PIDS                   default
	// sandbox_uid                    65200            default  XBOT_SANDBOX_UID                    default
	// sandbox_wait                   30s              default  XBOT_SANDBOX_WAIT                   default
	// sandbox_workspace_mib          1024             default  XBOT_SANDBOX_WORKSPACE_MIB          default
	// skills_dir                     (unset)          default  XBOT_SKILLS_DIR                     default
}
