/* api_convert.h: conversion of vmoperator.vmware.com objects between served API versions.
 * Pure: no I/O. The conversion webhook (ConversionReview) calls api_convert() per object.
 *
 * Hub and storage version: v1alpha6, as VM Operator. Every version converts to and from the hub
 * only (spoke -> hub -> spoke), never directly to another spoke. Why v1alpha6: it is VM Operator's
 * storage version, so objects stored by vmop and by VM Operator have the same shape; it is the
 * newest, so it holds every field of every older version that VM Operator still carries; and
 * v1alpha5 (what vmop stored before) differs from it only by additions, so objects already in etcd
 * as v1alpha5 read as valid v1alpha6 after a storage-version change.
 *
 * Losslessness, as VM Operator: a down-conversion that drops or alters hub data stores the hub's
 * spec and status (not metadata) as JSON in the annotation API_CONVERT_ANNOTATION on the older
 * object; the up-conversion restores what the older version cannot hold from it and removes the
 * annotation. Unlike VM Operator, the annotation is written only when it is needed (when the older
 * object converted back would not give the hub object exactly), so hub -> spoke -> hub is the
 * identity for every hub object and spoke -> hub -> spoke is the identity for every valid spoke.
 * Edits made in the older version win over the stored data for the fields that version holds.
 *
 * Kinds: VirtualMachine, VirtualMachineClass, VirtualMachineImage, ClusterVirtualMachineImage,
 * VirtualMachineService, VirtualMachineSetResourcePolicy; versions v1alpha1 .. v1alpha6.
 */
#ifndef VMOP_API_CONVERT_H
#define VMOP_API_CONVERT_H

#include <cjson/cJSON.h>

#include "vmop_err.h"

#define API_CONVERT_GROUP       "vmoperator.vmware.com"
#define API_CONVERT_HUB         "v1alpha6"
#define API_CONVERT_HUB_GV      API_CONVERT_GROUP "/" API_CONVERT_HUB
#define API_CONVERT_ANNOTATION  API_CONVERT_GROUP "/conversion-data"
#define API_CONVERT_MAX_VERSION 6 /* v1alpha1 .. v1alpha6 */
/* Largest conversion-data annotation value parsed (bytes). */
#define API_CONVERT_MAX_DATA (2u << 20)
/* Deepest object converted, counted in its hub (v1alpha6) form: nesting levels of objects and
 * arrays, the object itself being 1. The hub form is the one every conversion passes through and
 * the one kept as JSON text in the conversion-data annotation, which must parse again within
 * cJSON's nesting limit (1000); a version's own form is at most two levels deeper. Real objects of
 * these kinds, managedFields included, are under 20 levels deep. */
#define API_CONVERT_MAX_DEPTH 128

/* Converts obj (any served version of a known kind; borrowed) to desired_api_version
 * ("vmoperator.vmware.com/v1alphaN"). *ret: a new object (cJSON_Delete it). Fails with
 * VMOP_E_INVALID and a message naming the problem for a non-object, a missing or unknown kind or
 * apiVersion, metadata/spec/status that are not objects, a member name given twice in one object
 * (there or in the conversion-data annotation), an object nested deeper than
 * API_CONVERT_MAX_DEPTH in its hub form, or a conversion-data annotation that is not a JSON object;
 * VMOP_E_NOMEM when out of memory. */
vmop_rc api_convert(const cJSON *obj, const char *desired_api_version, cJSON **ret,
                    struct vmop_err *err);

/* 1 when kind is served in version ("v1alphaN") by api_convert(), else 0. */
int api_convert_served(const char *kind, const char *version);

#endif
