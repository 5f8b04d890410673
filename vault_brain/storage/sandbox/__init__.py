"""`vb session`'s Docker sandbox: the container, its images, mounts, streams and view."""
