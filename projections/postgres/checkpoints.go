package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// CheckpointsOf returns the next offset to read per partition of topic for
// projector, as last committed by ApplyBatch. Partitions never applied are
// absent (start from the beginning).
func (s *Projector) CheckpointsOf(ctx context.Context, projector, topic string) (map[int32]int64, error) {
	rows, err := s.pool.Query(ctx,
		"SELECT partition, next_offset FROM projector_checkpoints WHERE projector = $1 AND topic = $2",
		projector, topic)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of %s on %s: %w", projector, topic, err)
	}
	out := make(map[int32]int64)
	var part int32
	var next int64
	_, err = pgx.ForEachRow(rows, []any{&part, &next}, func() error {
		out[part] = next
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of %s on %s: %w", projector, topic, err)
	}
	return out, nil
}

// upsertCheckpointsSQL never moves a checkpoint backwards, and leaves the row
// untouched when it does not advance (a replayed batch changes nothing).
const upsertCheckpointsSQL = `INSERT INTO projector_checkpoints (projector, topic, partition, next_offset, updated_at)
SELECT $1, $2, pa, nx, now() FROM unnest($3::int[], $4::bigint[]) AS u(pa, nx)
ON CONFLICT (projector, topic, partition) DO UPDATE SET
	next_offset = EXCLUDED.next_offset, updated_at = EXCLUDED.updated_at
WHERE projector_checkpoints.next_offset < EXCLUDED.next_offset`

func queueCheckpoints(b *pgx.Batch, projector, topic string, p *batchPlan) {
	parts := make([]int32, 0, len(p.checkpoints))
	next := make([]int64, 0, len(p.checkpoints))
	for part, off := range p.checkpoints {
		parts, next = append(parts, part), append(next, off)
	}
	b.Queue(upsertCheckpointsSQL, projector, topic, parts, next)
}
