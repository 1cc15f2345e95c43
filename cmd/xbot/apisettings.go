package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/stack"
)

// apiAccess sets the API's JWT, limit, public URL and CORS options from the
// api_* keys.
func (s *settings) apiAccess(opts *stack.Options) error {
	opts.PublicURL = s.r.Get("api_public_url")
	creds, err := s.r.Bool("api_cors_credentials")
	if err != nil {
		return err
	}
	opts.CORS = api.CORSConfig{AllowedOrigins: s.r.List("api_cors_origins"), AllowCredentials: creds}
	opts.JWT = api.JWTConfig{HS256Secret: []byte(s.r.Get("api_jwt_hs256_secret")),
		Issuer: s.r.Get("api_jwt_issuer"), Audience: s.r.Get("api_jwt_audience")}
	if f := s.r.Get("api_jwt_public_key_file"); f != "" {
		pem, err := os.ReadFile(f) //nolint:gosec // the operator names the key file
		if err != nil {
			return fmt.Errorf("api_jwt_public_key_file: %w", err)
		}
		opts.JWT.PublicKeyPEM = pem
	}
	var errs []error
	dur := func(name string) time.Duration {
		d, err := s.r.Duration(name)
		errs = append(errs, err)
		return d
	}
	num := func(name string) int {
		n, err := s.r.Int(name)
		errs = append(errs, err)
		return n
	}
	l := &opts.APILimits
	l.ReadHeaderTimeout, l.IdleTimeout = dur("api_read_header_timeout"), dur("api_idle_timeout")
	l.MaxHeaderBytes, l.MaxConns = num("api_max_header_bytes"), num("api_max_conns")
	l.MaxStreams, l.MaxStreamsPerPrincipal = num("api_max_streams"), num("api_max_streams_per_principal")
	l.MaxWrites, l.WriteTimeout = num("api_max_concurrent_writes"), dur("api_write_timeout")
	wait, err := s.r.Duration("api_stream_appear_wait")
	switch {
	case err != nil:
		errs = append(errs, err)
	case wait <= 0:
		errs = append(errs, fmt.Errorf("api_stream_appear_wait must be positive (got %s)", wait))
	}
	opts.StreamAppearWait = wait
	return errors.Join(errs...)
}
