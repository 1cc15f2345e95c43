package contracttests

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// resume: the session stream of every tour, opened after each of its chunk
// ids (Last-Event-ID) — an event's last chunk ("<runId>:<seq>") and the
// ones before it ("<runId>:<seq>.<i>") alike — goes on with exactly the
// chunks that followed that chunk: none twice, none missing. The cursors of
// the runtime client only ever point after an event's last chunk; a reader
// whose connection drops in the middle of an event's chunks resumes after
// the others.
func (s *runtimeSuite) resume(ctx context.Context) error {
	tours, err := s.fixtures(ctx)
	if err != nil {
		return err
	}
	api, err := s.api(s.Token)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tours {
		if err := tourResume(ctx, api, t); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.name, err))
		}
	}
	return errors.Join(errs...)
}

func tourResume(ctx context.Context, api *client.Client, t *tour) error {
	page, err := api.ListSessionRuns(ctx, t.rc.SessionKey(), client.RunQuery{Page: client.Page{Limit: 1}})
	if err != nil {
		return err
	}
	all, err := chunksAfter(ctx, api, t.rc.SessionKey(), page.Session.FirstRunID+":0", chunkCount(t.evs))
	if err != nil {
		return fmt.Errorf("the stream from its start: %w", err)
	}
	for i, ch := range all {
		rest, err := chunksAfter(ctx, api, t.rc.SessionKey(), ch.EventID, len(all)-i-1)
		if err != nil {
			return fmt.Errorf("the stream after %s: %w", ch.EventID, err)
		}
		for j, got := range rest {
			if want := all[i+1+j]; got.EventID != want.EventID || !bytes.Equal(got.Raw, want.Raw) {
				return fmt.Errorf("the stream after %s: chunk %d is %s %s, want %s %s", ch.EventID, j, got.EventID, got.Raw, want.EventID, want.Raw)
			}
		}
	}
	return nil
}

// chunkCount is how many chunks of the session stream evs were mapped
// from: each chunk is one ResponseOutput, or one StatusChanged (or
// RuntimeDiagnostic) for a data-status part.
func chunkCount(evs []agentruntime.Event) int {
	n := 0
	for _, ev := range evs {
		switch ev.(type) {
		case agentruntime.ResponseOutput, agentruntime.StatusChanged, agentruntime.RuntimeDiagnostic:
			n++
		}
	}
	return n
}

// chunksAfter reads n chunks of the session stream after the chunk id
// after. A stream that would send more only does so once the conversation
// goes on, so reading exactly n is enough.
func chunksAfter(ctx context.Context, api *client.Client, session, after string, n int) ([]client.Chunk, error) {
	if n == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, waitEvent)
	defer cancel()
	out := make([]client.Chunk, 0, n)
	for ch, err := range api.SessionChunks(ctx, session, client.StreamOptions{After: after}) {
		if err != nil {
			return out, fmt.Errorf("after %d of %d chunks: %w", len(out), n, err)
		}
		if out = append(out, ch); len(out) == n {
			return out, nil
		}
	}
	return out, fmt.Errorf("the stream ended after %d of %d chunks", len(out), n)
}
