"""events.k8s.io: the Event API of the events.k8s.io group, another view of the core group's events."""
