package api

// WritesWaiting returns how many write requests wait for an intake slot.
func WritesWaiting(a *API) int64 { return a.intake.waiting.Load() }
