// Package openai is a model.Provider for OpenAI-compatible Chat Completions
// endpoints (POST {BaseURL}/chat/completions with "stream": true). It is
// written against, and tested with recorded streams from, OpenAI, DeepSeek,
// Qwen (DashScope compatible mode) and other hosted servers, and follows the
// wire forms of vLLM, Ollama (/v1) and llama.cpp's llama-server.
//
// Guarantees:
//
//   - Text and reasoning reach onDelta in the order the server sent them.
//     Reasoning is read from delta.reasoning_content (DeepSeek, Qwen) or
//     delta.reasoning (vLLM, Ollama, Groq, OpenRouter).
//   - Tool calls are assembled from deltas however a server splits them:
//     id and name in the first delta and arguments in pieces (OpenAI), the
//     whole call in one delta (Groq, vLLM), ids repeated or sent empty (Qwen),
//     indexes starting above zero (Anthropic-backed gateways), several calls
//     in parallel.
//   - Usage is taken from the final usage chunk (stream_options.include_usage)
//     or from whichever chunk carries it.
//   - A failure before any text or reasoning was delivered to onDelta is
//     retried up to Config.MaxRetries times, with backoff that honours
//     Retry-After, when it is transient: HTTP 408, 429 (except a spent quota)
//     and 5xx, a refused or reset connection, a stream that ended or failed
//     early, no first byte within Config.Timeout. A failure after output
//     started streaming is never retried: the partial response is returned
//     with a *model.Error whose Retryable is false.
//   - When ctx ends, Stream returns the partial response and ctx.Err().
//   - Every other error is a *model.Error. Context-window errors (OpenAI
//     context_length_exceeded, llama.cpp exceed_context_size_error, and the
//     wording of vLLM, DeepSeek, Qwen, Ollama, OpenRouter and others) have
//     Overflow set, so errors.Is(err, model.ErrContextOverflow) holds.
//   - Error messages never contain Config.APIKey, even when the server
//     echoes it back.
//
// Failure modes: a server that ignores stream_options sends no usage (Usage
// stays zero); a stream that ends cleanly without [DONE] is accepted only if a
// finish_reason arrived; OpenAI reasoning models reject max_tokens (they want
// max_completion_tokens), so leave Request.MaxTokens zero for them.
package openai
