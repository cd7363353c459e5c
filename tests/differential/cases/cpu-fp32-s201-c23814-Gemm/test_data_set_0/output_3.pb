
B	reshap_38JƒèD?1K‰?¼Í?