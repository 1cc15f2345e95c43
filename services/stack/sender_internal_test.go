package stack

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api"
)

// TestACommandIsHandedOverOnlyToBrokersElsewhere: with brokers elsewhere the
// sender gives its request's write slot back once the command is in the
// Kafka client's buffer, while the broker has not acknowledged it yet; with
// the broker in this process it never does (docs/performance.md says why).
func TestACommandIsHandedOverOnlyToBrokersElsewhere(t *testing.T) {
	t.Parallel()
	for _, inProcess := range []bool{false, true} {
		name := map[bool]string{false: "brokers elsewhere", true: "broker in this process"}[inProcess]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kc := kafka.Config{TopicPrefix: "t."}
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, kc.CommandsTopic()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cluster.Close)
			held, release := kafkatest.HoldFirstProduce(t, cluster)
			kc.Brokers, kc.InProcess = cluster.ListenAddrs(), inProcess
			prod, err := kafka.NewProducer(kc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(prod.Close)
			sender := newCommandSender(prod, kc, commands.GenerateKeyRing())
			if reflect.ValueOf(sender.queued).Pointer() != reflect.ValueOf(api.CommandQueued).Pointer() {
				t.Fatal("the sender does not hand its commands over with api.CommandQueued")
			}
			handedOver := make(chan struct{})
			sender.queued = func(context.Context) { close(handedOver) }

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			hdr := commands.Header{RunID: events.NewID("run"), TenantID: "acme", Actor: events.Actor{Type: "user", ID: "u"}}
			env, err := commands.New(commands.CreateRun, hdr, commands.CreateRunPayload{AgentID: "demo",
				Input: events.UserInput{Content: "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			sent := make(chan error, 1)
			go func() { sent <- sender.Send(ctx, env) }()
			wait := func(what string, ch <-chan struct{}) {
				t.Helper()
				select {
				case <-ch:
				case <-ctx.Done():
					t.Fatalf("waiting for %s: %v", what, ctx.Err())
				}
			}
			wait("the produce at the broker", held)
			if !inProcess {
				wait("the hand-over before the acknowledgement", handedOver)
			}
			select {
			case err := <-sent:
				t.Fatalf("Send returned (%v) before the broker answered", err)
			default:
			}
			release()
			if err := <-sent; err != nil {
				t.Fatalf("Send: %v", err)
			}
			if inProcess {
				select {
				case <-handedOver:
					t.Fatal("the slot was handed over with the broker in this process")
				default:
				}
			}
		})
	}
}
