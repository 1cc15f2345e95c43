package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// imReadHeaderTimeout bounds a handshake's headers, as the API's default does.
const imReadHeaderTimeout = 10 * time.Second

// runIMGateway runs the IM gateway against an API and Kafka.
func runIMGateway(ctx context.Context, args []string) error {
	s, err := load("im-gateway", args, "json")
	if err != nil {
		return err
	}
	defer func() { _ = s.log.Sync() }()
	kcfg, err := s.kafka(nil)
	if err != nil {
		return err
	}
	warnOpenKafka(s.log, kcfg.Security)
	apiURL := s.r.Get("im_api_url")
	if apiURL == "" {
		apiURL = "http://" + s.r.Get("api_addr")
	}
	srv, err := s.startIMGateway(ctx, kcfg, apiURL, s.r.Get("im_shell_isolation"))
	if err != nil {
		return err
	}
	s.log.Info("xbot im-gateway running", zap.String("im", "ws://"+srv.addr+"/sandbox"), zap.String("api", apiURL))
	<-ctx.Done()
	s.log.Info("xbot im-gateway stopping")
	srv.stop()
	return nil
}

// imServer is a running gateway and its listener.
type imServer struct {
	gw   *imgateway.Gateway
	http *http.Server
	addr string
	done chan struct{}
}

// startIMGateway starts the gateway on im_addr; SIGHUP re-reads im_endpoints.
func (s *settings) startIMGateway(ctx context.Context, kcfg kafka.Config, apiURL, shell string) (*imServer, error) {
	eps, err := parseEndpoints(s.r.Get("im_endpoints"))
	if err != nil {
		return nil, err
	}
	// A client's frames are handled in order: a message whose outcome is
	// still pending after the gateway's wait is not polled for (the reply
	// comes through the outbox), so the next frame is not held up.
	api, err := client.New(client.Config{BaseURL: apiURL, PendingTimeout: -1})
	if err != nil {
		return nil, err
	}
	iso := wire.ShellIsolation{Provider: shell, Available: shell == "bwrap"}
	if shell == "" {
		iso.Provider, iso.Message = "unknown", "set im_shell_isolation to the executors' compute provider"
	}
	gw, err := imgateway.New(imgateway.Config{Endpoints: eps, API: api, Kafka: kcfg, AgentID: s.r.Get("im_agent"),
		ShellIsolation: iso, MediaDir: s.r.Get("im_media_dir"), Logger: s.log.Named("im")})
	if err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.r.Get("im_addr"))
	if err != nil {
		gw.Close()
		return nil, fmt.Errorf("im gateway listen: %w", err)
	}
	srv := &imServer{gw: gw, addr: ln.Addr().String(), done: make(chan struct{}),
		http: &http.Server{Handler: gw, ReadHeaderTimeout: imReadHeaderTimeout}}
	go func() {
		if err := srv.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("im gateway server", zap.Error(err))
		}
	}()
	go s.reloadEndpointsOnHangup(srv)
	return srv, nil
}

// stop closes every client (1001) and the listener.
func (srv *imServer) stop() {
	close(srv.done)
	srv.gw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.http.Shutdown(ctx)
}

// reloadEndpointsOnHangup re-reads im_endpoints on SIGHUP: endpoints that
// changed are retired (their clients closed 1012) and mounted anew. A list
// that does not parse is reported and the endpoints stay as they are.
func (s *settings) reloadEndpointsOnHangup(srv *imServer) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-srv.done:
			return
		case <-hup:
		}
		r, err := config.Load(config.Sources{Flags: s.flags})
		var eps []imgateway.Endpoint
		if err == nil {
			eps, err = parseEndpoints(r.Get("im_endpoints"))
		}
		if err == nil {
			err = srv.gw.Reload(eps)
		}
		if err != nil {
			s.log.Error("im endpoints not reloaded; the previous ones stay", zap.Error(err))
			continue
		}
		s.log.Info("im endpoints reloaded", zap.Strings("paths", srv.gw.Paths()))
	}
}

// parseEndpoints parses im_endpoints, "id=owner,id=owner"; empty is the
// default endpoint.
func parseEndpoints(v string) ([]imgateway.Endpoint, error) {
	var out []imgateway.Endpoint
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, owner, ok := strings.Cut(part, "=")
		if !ok || id == "" || owner == "" {
			return nil, fmt.Errorf("im_endpoints: %q is not id=owner", part)
		}
		out = append(out, imgateway.Endpoint{ID: id, Owner: owner})
	}
	return out, nil
}
