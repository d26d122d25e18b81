"""The boundary to language models: the client protocol and its implementations."""
