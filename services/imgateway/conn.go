package imgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// readOnlyText is the seed's answer to a message on a read-only connection.
const readOnlyText = "当前连接是只读演示权限，不能运行 Agent 任务。"

// writeTimeout bounds one frame's write: a client that reads nothing for
// that long is gone, and its frames wait on the log for the next one.
const writeTimeout = 10 * time.Second

// conn is one client's connection to an endpoint.
type conn struct {
	gw  *Gateway
	ep  *endpoint
	ws  *websocket.Conn
	who client.Principal
	api *client.Client
	log *zap.Logger

	ctx    context.Context
	cancel context.CancelFunc
	// delivered is closed when the connection's outbox delivery ended.
	delivered chan struct{}
	closeOnce sync.Once
}

func newConn(g *Gateway, ep *endpoint, ws *websocket.Conn, who client.Principal, api *client.Client) *conn {
	return &conn{gw: g, ep: ep, ws: ws, who: who, api: api, delivered: make(chan struct{}),
		log: g.log.With(zap.String("endpoint", ep.Name), zap.String("tenant_id", who.TenantID))}
}

// serve runs the connection: it replaces the endpoint's previous client,
// sends the ready frame, delivers the outbox and reads the client's frames
// until the connection ends.
func (c *conn) serve(parent context.Context) {
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(parent))
	defer c.cancel()
	old, retired := c.ep.attach(c)
	if retired != 0 {
		close(c.delivered)
		_ = c.ws.Close(retired, "endpoint generation retired")
		return
	}
	prev := closedChan()
	if old != nil {
		prev = old.delivered
		go old.close(CloseReplaced, "replaced by new sandbox client")
	}
	defer c.ep.detach(c)
	if err := c.write(c.ready()); err != nil {
		close(c.delivered)
		return
	}
	go c.deliver(prev)
	c.read()
	c.cancel()
	<-c.delivered
}

// close stops the connection's delivery and closes it with code.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		_ = c.ws.Close(code, reason)
	})
}

// ready is the frame every connection starts with.
func (c *conn) ready() wire.Frame {
	can := c.who.CanCommand()
	iso := c.gw.cfg.ShellIsolation
	f := wire.Notice(wire.TypeReady, c.ep.Name, c.ep.Owner, fmt.Sprintf("Connected to sandbox %q.", c.ep.Name), nowMs())
	f.Bot, f.WorkingDirectory, f.CanExecute, f.ShellIsolation = c.ep.ID, c.gw.cfg.WorkingDirectory, &can, &iso
	return f
}

// read handles the client's frames in order until the connection ends.
func (c *conn) read() {
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			if websocket.CloseStatus(err) == -1 && !errors.Is(err, context.Canceled) {
				c.log.Debug("sandbox client gone", zap.Error(err))
			}
			return
		}
		c.handle(data)
	}
}

// write sends f to the client.
func (c *conn) write(f wire.Frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode %s frame: %w", f.Type, err)
	}
	ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// sayError sends an error frame with text to the client.
func (c *conn) sayError(id, text string) {
	if err := c.write(wire.Notice(wire.TypeError, c.ep.Name, id, text, nowMs())); err != nil {
		c.log.Debug("error frame not written", zap.Error(err))
	}
}

func nowMs() int64 { return time.Now().UnixMilli() }

func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}
