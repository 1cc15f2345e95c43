package tools

import (
	"context"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// AskUserName is the name of the ask_user tool.
const AskUserName = "ask_user"

type askUser struct{}

type askUserArgs struct {
	Question string `json:"question"`
}

func (askUser) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: AskUserName,
		Description: "Ask the user a question and wait for the answer. Use it only when you cannot proceed " +
			"without information or a decision that only the user has; the run pauses until the user answers, " +
			"and the answer arrives as this tool's result.",
		Parameters: []byte(`{
  "type": "object",
  "properties": {
    "question": {"type": "string", "minLength": 1, "description": "The question, complete and self-contained."}
  },
  "required": ["question"],
  "additionalProperties": false
}`),
	}
}

func (askUser) ItemType() events.ItemType { return events.ItemClarificationRequest }

// Run returns the question; the engine pauses the run until it is answered.
func (askUser) Run(_ context.Context, call Call) Result {
	var a askUserArgs
	if r := decode(call, &a); r != nil {
		return *r
	}
	q := strings.TrimSpace(a.Question)
	if q == "" {
		return Failed(events.ToolErrInvalidArguments, "ask_user: the question is empty")
	}
	return Result{Question: q}
}
