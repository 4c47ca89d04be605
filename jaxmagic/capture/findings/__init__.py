"""The sharp bits found at capture time: one module per kind of finding."""
