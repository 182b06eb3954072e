"""Services on the kernel: the model library. Finding GGUF files on this
computer, fetching the reference samples, the bundled demo resources,
describing files and their vocabularies, and the names models are shown
by. Built on ``tokenprism.core``; the kernel never imports them."""
