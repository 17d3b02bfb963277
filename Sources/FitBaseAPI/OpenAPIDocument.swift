import Foundation  // Bundle lives in full Foundation

/// The contract this build was generated from, as shipped in the module's resources.
public enum OpenAPIDocument {
    /// The bytes of `openapi.yaml`, exactly as in the source tree.
    public static func load() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "openapi.yaml (FitBaseAPI resource bundle)"])
        }
        return try Data(contentsOf: url)
    }
}
