package imgateway

import (
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// outbound returns content with every media segment in its outbound form
// (wire.Media, files only from dir); a segment that cannot be sent is left
// out and logged as sandbox_outbound_media_dropped. Other segments pass as
// they are.
func outbound(content []wire.Segment, dir string, log *zap.Logger) []wire.Segment {
	out := content[:0:0]
	for _, seg := range content {
		if !wire.IsMedia(seg) {
			out = append(out, seg)
			continue
		}
		m, err := wire.Media(seg, dir)
		if err != nil {
			log.Info("sandbox_outbound_media_dropped", zap.String("segment", seg.Type), zap.Error(err))
			continue
		}
		out = append(out, m)
	}
	return out
}
