package metrics

import (
	"strconv"
	"sync/atomic"

	"github.com/IBM/pgxpoolprometheus"
)

// pools numbers the Postgres pools a process opens, for their label.
var pools atomic.Int64

// TrackPool exports the statistics of a process's Postgres pool (pgxpool)
// as the pgxpool_* metrics, labelled pool="1" for the first pool the
// process opens (a deployed process opens one), "2" for the next, and so
// on. The returned function stops exporting them; call it when the pool
// closes.
func TrackPool(pool pgxpoolprometheus.Stater) (untrack func()) {
	c := pgxpoolprometheus.NewCollector(pool, map[string]string{"pool": strconv.FormatInt(pools.Add(1), 10)})
	Registry.MustRegister(c)
	return func() { Registry.Unregister(c) }
}
