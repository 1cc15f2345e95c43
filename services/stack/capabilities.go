package stack

import (
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// checkProfiles refuses to start with a profile naming a tool that does not
// exist, or an MCP header naming a secret the executor does not hold:
// better now than as a failed run later.
func checkProfiles(c *profile.Catalog, reg *tools.Registry, secrets map[string]string) error {
	var errs []error
	held := mcp.NewSecrets(secrets)
	for _, id := range c.IDs() {
		p, _ := c.Get(id)
		if _, err := reg.Specs(p.Tools); err != nil {
			errs = append(errs, fmt.Errorf("agent %s: %w", id, err))
		}
		for _, srv := range p.MCPServers {
			if missing := held.Missing(srv.Secrets()); len(missing) > 0 {
				errs = append(errs, fmt.Errorf("agent %s: MCP server %s: headers name secrets the executor does not hold (mcp_secrets): %s",
					id, srv.Name, strings.Join(missing, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}

// warnMissingSkills logs the profiles' skills that have no stored version
// in range now: their runs fail at start until one is added.
func (s *Stack) warnMissingSkills() {
	for _, id := range s.opts.Profiles.IDs() {
		p, _ := s.opts.Profiles.Get(id)
		for _, ref := range p.Skills {
			var err error
			if s.opts.Skills == nil {
				err = errors.New("no skill store is configured (skills_dir)")
			} else {
				_, err = s.opts.Skills.Resolve(ref)
			}
			if err != nil {
				s.log.Warn("an agent's skill cannot be resolved; its runs fail at start until it can",
					zap.String("agent_id", id), zap.String("skill", ref.Name), zap.Error(err))
			}
		}
	}
}
