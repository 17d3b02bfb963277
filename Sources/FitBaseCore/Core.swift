public enum FitBaseCoreInfo { public static let name = "FitBase" }
