"""The ground floor: helpers every layer of ``paddle_pfc`` may import; imports no other package of ours."""
