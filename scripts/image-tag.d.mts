// Types of scripts/image-tag.mjs for the TypeScript that imports it (the e2e suite's image builds).
export declare const IMAGE_REPOSITORY: string;
export declare const HASH_LENGTH: number;
export declare function imageInputs(context: string): string[];
export declare function contentHash(context: string): string;
export declare function imageTag(context: string): string;
export declare const COMPOSE_DEFAULT_IMAGE: string;
export declare function builtHash(image: string): string | undefined;
export declare function composeImages(envFile: string): string[];
export declare function buildImage(context: string, envFile?: string): { tag: string; built: boolean; from: string };
export declare function useImage(tag: string, envFile: string): { previous: string | undefined };
