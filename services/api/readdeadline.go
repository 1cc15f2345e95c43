package api

import (
	"context"
	"net/http"
	"time"
)

// writerKey carries a request's http.ResponseWriter to its operation handler
// (liftReadDeadline).
type writerKey struct{}

// keepWriter puts w in the request's context.
func keepWriter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), writerKey{}, w)))
	})
}

// liftReadDeadline clears the connection's read deadline once the request
// body is read. huma bounds reading a body with a read deadline on the
// connection (Limits.BodyReadTimeout) and leaves it set; net/http meanwhile
// reads the connection in the background to notice a client that goes away,
// and takes that read failing at the deadline for one: it cancels the
// request's context and those of all later requests on the same keep-alive
// connection. Without this, a handler slower than the body timeout (a produce
// that waits out a broker's leader failover, a ?wait= longer than it) was
// cancelled halfway, and the connection's next requests failed at once.
func liftReadDeadline(ctx context.Context) {
	if w, ok := ctx.Value(writerKey{}).(http.ResponseWriter); ok {
		// A writer that cannot set deadlines has none set by huma either.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
}
