"""GRPO groups: the answers to one prompt at one step, their advantages, and each prompt's
history over the run.  Pure pandas over the summary frame: no line is parsed here."""
