// Package capacity bounds how many sandboxes are open at once, per tenant
// and in total, by wrapping a compute.Provider.
//
// Guarantees:
//   - At most Config.PerTenant handles of one tenant and Config.Total
//     handles altogether are open (Open returned, Close not yet called).
//   - An Open over a cap waits for a handle to close, up to Config.Wait or
//     until its context ends, whichever comes first; then it fails with a
//     *Error that wraps ErrFull and names the cap. Waiting Opens are served
//     as handles close, not in a guaranteed order.
//   - Close releases the handle's slot exactly once, however often it is
//     called.
package capacity
