package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/postgres"
)

func TestRedactDSN(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, dsn, want string }{
		{"url", "postgres://app:s3cret@db:5432/x?sslmode=disable", "postgres://app:xxxxx@db:5432/x?sslmode=disable"},
		{"url without password", "postgres://app@db/x", "postgres://app@db/x"},
		{"postgresql scheme", "postgresql://app:s3cret@db/x", "postgresql://app:xxxxx@db/x"},
		{"url query password", "postgres://db/x?password=s3cret&user=app", "postgres://db/x?password=xxxxx&user=app"},
		{"escaped password", "postgres://app:p%40ss@db/x", "postgres://app:xxxxx@db/x"},
		{"unparsable url", "postgres://app:s3cret@db:port/x", "postgres://app:xxxxx@db:port/x"},
		{"keyword", "host=db user=app password=s3cret dbname=x", "host=db user=app password=xxxxx dbname=x"},
		{"keyword quoted", "host=db password='s3 cr\\'et' dbname=x", "host=db password=xxxxx dbname=x"},
		{"keyword spaced", "host=db password = s3cret", "host=db password = xxxxx"},
		{"keyword without password", "host=db dbname=x", "host=db dbname=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := postgres.RedactDSN(tt.dsn); got != tt.want {
				t.Errorf("RedactDSN(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
		})
	}
}

func TestConnectErrorHidesPassword(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback refuses connections; the bad port does not parse.
	dsns := []string{
		"postgres://app:s3cretpw@127.0.0.1:1/x?connect_timeout=5",
		"postgres://app:s3cretpw@127.0.0.1:notaport/x",
		"postgres://app:s3cretpw@127.0.0.1:1/x?connect_timeout=notanumber",
		"host=127.0.0.1 port=1 user=app password=s3cretpw connect_timeout=5",
		"host=127.0.0.1 port=notaport password=s3cretpw",
	}
	for _, dsn := range dsns {
		_, err := postgres.Connect(context.Background(), dsn)
		if err == nil {
			t.Fatalf("Connect(%s) succeeded", postgres.RedactDSN(dsn))
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("error reveals the password: %v", err)
		}
	}
}

func TestConnect(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	var one int
	if err := pool.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
