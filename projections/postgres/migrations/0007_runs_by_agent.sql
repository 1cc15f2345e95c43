-- A tenant's runs of one agent, newest first: the agents endpoint shows what
-- the latest of them listed of the agent's MCP servers.
CREATE INDEX runs_tenant_agent_created ON runs (tenant_id, agent_id, created_at);
