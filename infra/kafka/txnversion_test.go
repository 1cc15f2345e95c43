package kafka_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// TestWritersSpeakTheTransactionVersionConfigured: against a cluster whose
// transaction.version is 2 (kfake's), a writer tuned for transaction
// version 1, the default, adds the partition of each transaction with
// AddPartitionsToTxn; one tuned for version 2 adds none (its produces add
// them). Both commit every transaction.
func TestWritersSpeakTheTransactionVersionConfigured(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version  int16
		wantAdds bool
	}{{0, true}, {1, true}, {2, false}} {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
		if err != nil {
			t.Fatal(err)
		}
		var adds atomic.Int64
		cluster.ControlKey(int16(kmsg.AddPartitionsToTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
			cluster.KeepControl()
			adds.Add(1)
			return nil, nil, false // kfake answers it
		})
		kc := kafka.Config{Brokers: cluster.ListenAddrs(), TransactionVersion: c.version}
		cl, err := kafka.NewClient(kc, append([]kgo.Opt{kgo.TransactionalID("txn-version"),
			kgo.DefaultProduceTopic("t"), kgo.AllowAutoTopicCreation()}, kafka.WriterTuning(kc)...)...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for i := range 3 {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatalf("version %d: produce: %v", c.version, err)
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatalf("version %d: commit: %v", c.version, err)
			}
		}
		cancel()
		cl.Close()
		cluster.Close()
		if got := adds.Load(); (got >= 3) != c.wantAdds || (!c.wantAdds && got != 0) {
			t.Errorf("transaction version %d: %d AddPartitionsToTxn for 3 transactions", c.version, got)
		}
	}
}

// TestTransactionVersionIsOneOrTwo: 0 takes the default, 1; any version
// but 1 and 2 is refused by name.
func TestTransactionVersionIsOneOrTwo(t *testing.T) {
	t.Parallel()
	if got := (kafka.Config{}).WithDefaults().TransactionVersion; got != 1 {
		t.Errorf("default transaction version %d, want 1", got)
	}
	for v, ok := range map[int16]bool{0: true, 1: true, 2: true, 3: false, -1: false} {
		err := kafka.Config{Brokers: []string{"b:9092"}, TransactionVersion: v}.Validate()
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "kafka_transaction_version")) {
			t.Errorf("transaction version %d: %v", v, err)
		}
	}
}
