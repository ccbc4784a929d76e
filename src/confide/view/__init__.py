"""`confide view`: a run browser (runs, episodes, one episode from any participant's
perspective, glossary) served locally or written as static files."""

from confide.view.site import Site, serve, serve_in_thread, write_bundle

__all__ = ["Site", "serve", "serve_in_thread", "write_bundle"]
