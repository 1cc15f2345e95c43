package wmkafka_test

import (
	"errors"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

func TestZapLogger(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	l := wmkafka.NewZapLogger(zap.New(core)).With(watermill.LogFields{"topic": "events"})
	l.Error("commit failed", errors.New("boom"), watermill.LogFields{"partition": int32(3)})
	l.Info("info", nil)
	l.Debug("debug", nil)
	l.Trace("trace", nil)

	want := []struct {
		level zapcore.Level
		msg   string
	}{{zapcore.ErrorLevel, "commit failed"}, {zapcore.InfoLevel, "info"}, {zapcore.DebugLevel, "debug"}, {zapcore.DebugLevel, "trace"}}
	got := logs.All()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Level != w.level || got[i].Message != w.msg || got[i].ContextMap()["topic"] != "events" {
			t.Errorf("entry %d = %v %q %v, want %v %q with topic", i, got[i].Level, got[i].Message, got[i].ContextMap(), w.level, w.msg)
		}
	}
	if f := got[0].ContextMap(); f["partition"] != int32(3) || f["error"] != "boom" {
		t.Errorf("error entry fields = %v", f)
	}
}

func TestNewZapLoggerPanicsOnNil(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("NewZapLogger(nil) did not panic")
		}
	}()
	wmkafka.NewZapLogger(nil)
}
