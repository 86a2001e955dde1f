"""What kube keeps in pkg/registry/<group>/<kind>: the behaviour of built-in kinds that their schemas cannot
say (strategies, admission plugins, controllers). Definitions name these classes (``strategy: module:Class``),
the generated REST bindings wire them in, and the generic runtime in ``apiserver/`` never names a kind."""
