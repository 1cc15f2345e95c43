package contracttests

// The agents the conformance suites drive, besides the built-in demo agent
// (a scripted greeting). Each has a behaviour the suites rely on; their
// profiles are ConformanceAgentsYAML.
const (
	// AgentSlow streams one long reply, slowly (about a minute): a run that
	// stays running until the suite cancels it.
	AgentSlow = "conformance-slow"
	// AgentApproval asks to run one shell command, which its policy sends
	// for approval, then answers "Done: <input>".
	AgentApproval = "conformance-approval"
	// AgentQuestion asks the user a question (ask_user, whose result is the
	// answer), then says "You said <the conversation's input>."
	AgentQuestion = "conformance-question"
	// AgentExpire is AgentApproval whose pause expires after 2 s.
	AgentExpire = "conformance-expire"
	// AgentFail fails its first model call (a scripted bad_request).
	AgentFail = "conformance-fail"
	// AgentDemo is the built-in demo agent.
	AgentDemo = "demo"
)

// ConformanceAgentsYAML is the agents_file (agents.yaml) fragment that
// configures the agents the conformance suites need; a deployment adds it to
// its own agents file before it runs the suites (xbot conformance
// --print-agents prints it). AgentApproval and AgentExpire run one shell
// command ("echo conformance") in their sandbox once approved.
const ConformanceAgentsYAML = `agents:
  - id: conformance-slow
    model: scripted
    script:
      - text: "` + slowText + `"
        chunkChars: 1
        delay: 100ms
  - id: conformance-approval
    model: scripted
    tools: [shell]
    policy:
      rules:
        - { id: conformance-ask, tool: shell, action: require_approval, reason: the conformance suite asks first }
    script:
      - text: "Running one command."
        toolCalls: [{ name: shell, arguments: '{"command":"echo conformance"}' }]
      - text: "Done: {{input}}"
  - id: conformance-question
    model: scripted
    tools: [ask_user]
    script:
      - toolCalls: [{ name: ask_user, arguments: '{"question":"Which colour?"}' }]
      - text: "You said {{input}}."
  - id: conformance-expire
    model: scripted
    tools: [shell]
    pauseTtl: 2s
    policy:
      rules:
        - { id: conformance-ask, tool: shell, action: require_approval, reason: the conformance suite asks first }
    script:
      - text: "Running one command."
        toolCalls: [{ name: shell, arguments: '{"command":"echo conformance"}' }]
      - text: "Done: {{input}}"
  - id: conformance-fail
    model: scripted
    script:
      - error: bad_request
`

// slowText is AgentSlow's reply: 600 characters, one every 100 ms.
const slowText = "This reply streams one character at a time so that the conformance suite can act on a run that is still running. " +
	"This reply streams one character at a time so that the conformance suite can act on a run that is still running. " +
	"This reply streams one character at a time so that the conformance suite can act on a run that is still running. " +
	"This reply streams one character at a time so that the conformance suite can act on a run that is still running. " +
	"This reply streams one character at a time so that the conformance suite can act on a run that is still running. " +
	"The end."
