
B	squeez_35JP|T¾¼öƒ=K¹?