"""Knowledge: `vb extract` and `vb items`, offline or with a model."""
