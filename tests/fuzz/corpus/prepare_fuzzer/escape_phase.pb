
../../xscratchR€ € 