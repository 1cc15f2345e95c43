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
	// KEY                       VALUE            LAYER    VARIABLE                       ORIGIN
	// agents_file               (unset)          default  XBOT_AGENTS_FILE               default
	// api_addr                  :8081            flag     XBOT_API_ADDR                  --api-addr
	// api_tokens                (unset)          default  XBOT_API_TOKENS                default
	// clickhouse_addr           (unset)          default  XBOT_CLICKHOUSE_ADDR           default
	// clickhouse_database       xbot             default  XBOT_CLICKHOUSE_DATABASE       default
	// clickhouse_password       (unset)          default  XBOT_CLICKHOUSE_PASSWORD       default
	// clickhouse_user           default          default  XBOT_CLICKHOUSE_USER           default
	// command_wait_default      5s               default  XBOT_COMMAND_WAIT_DEFAULT      default
	// command_wait_max          30s              default  XBOT_COMMAND_WAIT_MAX          default
	// compute_dir               (unset)          default  XBOT_COMPUTE_DIR               default
	// compute_provider          auto             default  XBOT_COMPUTE_PROVIDER          default
	// data_dir                  (unset)          default  XBOT_DATA_DIR                  default
	// dev_kafka_addr            127.0.0.1:9092   default  XBOT_DEV_KAFKA_ADDR            default
	// events_page_max_bytes     1048576          default  XBOT_EVENTS_PAGE_MAX_BYTES     default
	// executor_id               (unset)          default  XBOT_EXECUTOR_ID               default
	// kafka_brokers             k1:9092,k2:9092  env      XBOT_KAFKA_BROKERS             XBOT_KAFKA_BROKERS
	// kafka_partitions          12               default  XBOT_KAFKA_PARTITIONS          default
	// kafka_replication_factor  -1               default  XBOT_KAFKA_REPLICATION_FACTOR  default
	// kafka_topic_prefix        (unset)          default  XBOT_KAFKA_TOPIC_PREFIX        default
	// llm_api_key               (unset)          default  XBOT_LLM_API_KEY               default
	// llm_base_url              (unset)          default  XBOT_LLM_BASE_URL              default
	// llm_model                 (unset)          default  XBOT_LLM_MODEL                 default
	// log_format                (unset)          default  XBOT_LOG_FORMAT                default
	// log_level                 info             default  XBOT_LOG_LEVEL                 default
	// pg_dsn                    ***redacted***   env      XBOT_PG_DSN                    XBOT_PG_DSN
}
