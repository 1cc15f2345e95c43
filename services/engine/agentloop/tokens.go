package agentloop

import "github.com/xbot-runtime/xbot/services/engine/model"

// Token estimate weights. Tokenizers average about 4 bytes of English or code
// a token; text in other scripts runs closer to one token a character, so
// each non-ASCII character counts as one token (an overestimate for accented
// Latin, which is the safe side for a threshold).
const (
	// messageOverhead is the role marker and separators a chat template adds
	// around every message.
	messageOverhead = 4
	// toolOverhead is the framing a provider adds around every tool spec.
	toolOverhead = 8
)

// EstimateTokens estimates the prompt tokens of msgs and tools without a
// tokenizer: ASCII bytes/4 (rounded up) plus one token per non-ASCII
// character of every content, call name and arguments, plus messageOverhead a
// message; each tool adds its name, description and schema the same way plus
// toolOverhead. It is deterministic and never decreases when anything is
// added, so thresholds compare equal histories equally; it is a guide, not a
// count, and can be off by a quarter either way.
func EstimateTokens(msgs []model.Message, tools []model.ToolSpec) int {
	n := 0
	for _, m := range msgs {
		n += messageOverhead + textTokens(m.Content)
		for _, c := range m.ToolCalls {
			n += textTokens(c.Name) + textTokens(c.Arguments)
		}
	}
	for _, t := range tools {
		n += toolOverhead + textTokens(t.Name) + textTokens(t.Description) + textTokens(string(t.Parameters))
	}
	return n
}

func textTokens(s string) int {
	ascii, runes := 0, 0
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x80:
			ascii++
		case b&0xC0 != 0x80: // the first byte of a multi-byte character
			runes++
		}
	}
	return (ascii+3)/4 + runes
}
