package api

import "encoding/json"

// AgentMCPServer is one MCP server of an agent. Its tools are what the
// tenant's latest run of the agent listed when it started: a server is
// reached by the executors only (its stdio command runs in a run's sandbox,
// its secrets are theirs), so the API shows the last listing, and a run's
// snapshot (GET /v1/runs/{runId}/snapshot) the one it froze.
type AgentMCPServer struct {
	Name      string `json:"name" doc:"The server's name; its tools are offered as <name>__<tool>."`
	Transport string `json:"transport" enum:"stdio,http,sse" doc:"stdio: a command run in each run's sandbox; http (streamable HTTP) or sse: a remote server."`
	Optional  bool   `json:"optional" doc:"Whether a run starts without the server when it cannot be reached (true) or fails (false)."`
	// Listed is nil until a run of the agent in this tenant started.
	Listed *AgentMCPListing `json:"listed,omitempty" doc:"What the tenant's latest run of the agent found when it started; absent before any run."`
}

// AgentMCPListing is what one run found of an MCP server when it started.
type AgentMCPListing struct {
	RunID           string         `json:"runId" doc:"The run whose start listed the server."`
	ListedAt        int64          `json:"listedAt" doc:"Unix milliseconds: when that run froze its snapshot."`
	ServerName      string         `json:"serverName,omitempty" doc:"The name the server gave itself."`
	ServerVersion   string         `json:"serverVersion,omitempty" doc:"The version the server gave."`
	ProtocolVersion string         `json:"protocolVersion,omitempty" doc:"The MCP protocol version of the connection."`
	Skipped         string         `json:"skipped,omitempty" doc:"Why an optional server was left out of that run."`
	Tools           []AgentMCPTool `json:"tools" nullable:"false"`
}

// AgentMCPTool is one tool of an MCP server.
type AgentMCPTool struct {
	Name        string          `json:"name" doc:"The name the model is offered: <server>__<tool>."`
	Tool        string          `json:"tool" doc:"The tool's name on its server."`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters" doc:"The JSON Schema of the tool's arguments (an object)."`
	Annotations json.RawMessage `json:"annotations,omitempty" doc:"The server's hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title."`
}

// AgentSkill is one skill of an agent, resolved in the skill store as a run
// starting now would resolve it.
type AgentSkill struct {
	Name         string `json:"name"`
	VersionRange string `json:"versionRange" doc:"The range the agent accepts; empty: any version."`
	// Version and the rest are empty when no stored version is in range.
	Version     string `json:"version,omitempty" doc:"The newest stored version in range: what a run starting now gets."`
	ID          string `json:"id,omitempty" doc:"The skill version id, name@version; mounted at /skills/{id}/ in the sandbox."`
	Digest      string `json:"digest,omitempty" doc:"sha256: and the digest of the version's files."`
	Description string `json:"description,omitempty" doc:"What the model is told about the skill."`
	Problem     string `json:"problem,omitempty" doc:"Why no version resolves (a run of the agent would fail to start)."`
}
