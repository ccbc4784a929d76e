"""Sotopia-ToM (sotopia_tom.md): multi-party information sharing under privacy constraints."""
