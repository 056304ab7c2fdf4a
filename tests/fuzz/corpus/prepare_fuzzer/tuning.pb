
p1scratch
*
	schedulernoneR€ € 