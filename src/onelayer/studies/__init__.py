"""Studies: experiments that run the papers' objects over seeds, sizes and readings."""
