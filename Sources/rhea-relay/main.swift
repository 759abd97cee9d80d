print("rhea-relay")
