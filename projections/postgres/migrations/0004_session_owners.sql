-- Who owns a platform session: the actor of the first create in it. Unlike
-- the other tables this one is not derived from the log: the API writes it
-- (Store.ClaimSession), its primary key deciding between two first creates,
-- before the command reaches Kafka. A replay (Reset) leaves it alone.
CREATE TABLE session_owners (
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL,
    owner_actor_id      text        NOT NULL,
    claimed_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, platform_session_id)
);

-- Sessions projected before this migration belong to the sandbox owner of
-- their first run (the creating actor, unless it named another owner).
INSERT INTO session_owners (tenant_id, platform_session_id, owner_actor_id, claimed_at)
SELECT s.tenant_id, s.platform_session_id, COALESCE(NULLIF(r.sandbox_key->>'ownerId', ''), s.tenant_id), s.first_run_at
FROM sessions s JOIN runs r ON r.run_id = s.first_run_id
ON CONFLICT DO NOTHING;
