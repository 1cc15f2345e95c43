// Package policy decides, for one tool call, whether it runs, needs a
// person's approval, or is refused. Rules live in the agent
// profile and are frozen into each run's capability snapshot.
//
// A Policy is an ordered list of rules, the profile's first and then the
// built-in DefaultRules; the first rule that matches a call decides it, and a
// call no rule matches gets Config.Default. Rule ids are stable: permission
// grants name them, so a grant keeps meaning the same thing across runs.
//
// Rules match the text of a call's arguments, not what the call will do. The
// built-in rules stop an honest or careless model from running a destructive
// or leaking command without a person seeing it; they do not stop a model
// that sets out to evade them (quoting, globbing, indirection). The sandbox,
// not this package, is the security boundary.
package policy
