import Foundation
import PackagePlugin

/// Generates FitBaseAPI's types, server protocol and client from `openapi.yaml` with swift-openapi-generator, as its
/// own `OpenAPIGenerator` plugin does, through `fitbase-api-generator`, which writes the files with plain imports
/// (that tool says why).
@main
struct FitBaseAPIGenerator: BuildToolPlugin {
    /// The files swift-openapi-generator writes for `generate: [types, server, client]` (its `OutputFileName` cases);
    /// `fitbase-api-generator` fails, naming the file, when it writes another.
    static let generatedFiles = [
        "Types.swift", "Types+Components.swift", "Types+Operations.swift", "Types+Components+Schemas.swift",
        "Types+Components+Parameters.swift", "Types+Components+RequestBodies.swift",
        "Types+Components+Responses.swift", "Types+Components+Headers.swift", "Client.swift", "Server.swift",
    ]

    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let document = target.directoryURL.appending(component: "openapi.yaml")
        let configuration = target.directoryURL.appending(component: "openapi-generator-config.yaml")
        let generated = context.pluginWorkDirectoryURL.appending(component: "GeneratedSources")
        let outputs = Self.generatedFiles.map { generated.appending(component: $0) }
        let generator = try context.tool(named: "swift-openapi-generator").url
        return [
            .buildCommand(
                displayName: "Generating \(target.name) from openapi.yaml",
                executable: try context.tool(named: "fitbase-api-generator").url,
                arguments: [
                    generator.path(percentEncoded: false),
                    document.path(percentEncoded: false),
                    configuration.path(percentEncoded: false),
                    context.pluginWorkDirectoryURL.appending(component: "Generator").path(percentEncoded: false),
                ] + outputs.map { $0.path(percentEncoded: false) },
                inputFiles: [generator, document, configuration],
                outputFiles: outputs
            )
        ]
    }
}
