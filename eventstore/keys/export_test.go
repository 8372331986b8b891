package keys

// Knows tells whether k's cached copy holds kid, without reading the keys
// again as Verifying may: the rotation test asks what an instance knows.
func (k *SigningKeys) Knows(kid string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.byKID[kid]
	return ok
}
