import FitBaseAPI
