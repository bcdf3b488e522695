"""What the course notebooks use beyond the cluster itself: exercises ("Your turn"),
their checks and their worked answers. The notebooks import these modules by name, e.g.
``from minikafka.course import exercises``."""
