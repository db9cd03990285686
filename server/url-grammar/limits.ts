// Transport ceilings shared by the gateway, the binder and the docs.
export const MAX_REQUEST_TARGET_BYTES = 12 * 1024;
export const MAX_RAW_BYTES = 8 * 1024;
/** Node's own header-size ceiling for the data plane, high enough that our 12 KiB check answers first. */
export const DATA_PLANE_MAX_HEADER_BYTES = 64 * 1024;
