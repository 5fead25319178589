"""AWS components of the kit: the network a GPU stack runs in and its GPU pools."""
