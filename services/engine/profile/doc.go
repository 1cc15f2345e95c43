// Package profile loads agent profiles: which model an agent uses, its system
// prompt, tools and limits, and — for the scripted model — the turns it plays.
// A built-in "demo" profile is always present.
package profile
