"""System and user prompt templates of the LLM judge (section 4.2, A.10), in our own words."""
