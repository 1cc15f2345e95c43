package main

import (
	"testing"

	"github.com/xbot-runtime/xbot/services/imgateway"
)

func TestParseEndpoints(t *testing.T) {
	t.Parallel()
	eps, err := parseEndpoints(" a=alice, b=bob ")
	if err != nil || len(eps) != 2 || eps[1] != (imgateway.Endpoint{ID: "b", Owner: "bob"}) {
		t.Fatalf("%+v %v", eps, err)
	}
	if eps, err := parseEndpoints(""); err != nil || eps != nil {
		t.Fatalf("empty: %+v %v", eps, err)
	}
	if _, err := parseEndpoints("a"); err == nil {
		t.Fatal("an endpoint without owner parsed")
	}
}
