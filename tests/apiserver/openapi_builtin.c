/* openapi_builtin.c: compact OpenAPI v3 schemas of the built-in kinds the test API server serves
 * and of the shared meta.k8s.io types (openapi.h). Written as JSON with ' for " (descriptions avoid
 * apostrophes) and parsed on demand; enough for `kubectl explain` and the apply field-validation
 * probe, not a copy of the Kubernetes schemas. */
#include "openapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The schema strings below are laid out by hand: clang-format 14 does not reach a fixed point on
 * long STR() concatenations. */
/* clang-format off */

#define META    "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
#define REF(x)  "{'allOf':[{'$ref':'" META x "'}],'default':{}"
#define STR(d)  "{'type':'string','description':'" d "'}"
#define INT(d)  "{'type':'integer','format':'int32','description':'" d "'}"
#define BOOL(d) "{'type':'boolean','description':'" d "'}"
#define TIME(d) "{'type':'string','format':'date-time','description':'" d "'}"
#define SMAP(d)                                                                                    \
    "{'type':'object','additionalProperties':{'type':'string','default':''},'description':'" d "'" \
                                                                                               "}"
#define ANYOBJ(d)                                                                                  \
    "{'type':'object','x-kubernetes-preserve-unknown-fields':true,'description':'" d "'}"
#define OBJMETA                                                                                    \
    "'metadata':" REF("ObjectMeta") ",'description':'Standard object metadata. More info: "        \
                                    "https://git.k8s.io/community/contributors/devel/"             \
                                    "sig-architecture/api-conventions.md#metadata'}"
#define TYPEMETA                                                                                   \
    "'apiVersion':" STR("APIVersion defines the versioned schema of this representation of an "    \
                        "object. Servers should convert recognized schemas to the latest "         \
                        "internal value, and may reject unrecognized values. More info: "          \
                        "https://git.k8s.io/community/contributors/devel/sig-architecture/"        \
                        "api-conventions.md#resources") ",'kind':" STR(                            \
        "Kind is a string value representing the REST resource this object represents. Servers "   \
        "may infer this from the endpoint the client submits requests to. Cannot be updated. In "  \
        "CamelCase. More info: "                                                                   \
        "https://git.k8s.io/community/contributors/devel/sig-architecture/"                        \
        "api-conventions.md#types-kinds")

struct builtin {
    const char *group, *kind, *json;
};

static const struct builtin
    meta_types
        [] =
            {
                {"meta", "ObjectMeta",
                 "{'description':'ObjectMeta is metadata that all persisted resources must have, "
                 "which includes "
                 "all objects users must create.','type':'object','properties':{"
                 "'annotations':" SMAP("Annotations is an unstructured key value map stored with a "
                                       "resource that may be set by external tools to store and "
                                       "retrieve arbitrary metadata.") ",'creationTimestamp':" TIME("CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only.") ",'deletionGracePeriodSeconds':{'type':'integer','format':'int64','description':'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set.'}"
                                                                                                                                                                                                                                       ",'deletionTimestamp':" TIME("DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Set by the server when a graceful deletion is requested by the user. Read-only.") ",'finalizers':{'type':'array','items':{'type':'string','default':''},'x-kubernetes-list-type':'set','description':'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.'}"
                                                                                                                                                                                                                                                                                                                                                                                                                                           ",'generateName':" STR(
                                                                                                                                                                                                                                                                                                                                                                                                                                               "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.") ",'generation':{'type':'integer','format':'int64','description':'A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.'}"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                  ",'labels':" SMAP("Map of string keys and values that can be used to organize and categorize (scope and select) objects.") ",'managedFields':{'type':'array','items':" REF(
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "ManagedFieldsEntry") "},'description':'ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.'}"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            ",'name':" STR("Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated.") ",'namespace':" STR(
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                "Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the default namespace. Cannot be updated.") ",'ownerReferences':{'type':'array','items':" REF("OwnerReference") "},'x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['uid'],'description':'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.'}"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                        ",'resourceVersion':" STR("An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Read-only.") ",'selfLink':" STR(
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            "Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.") ",'uid':" STR("UID is the unique in time and space value for this object. Populated by the system. Read-only.") "}}"},
                {"meta", "OwnerReference",
                 "{'description':'OwnerReference contains enough information to let you identify "
                 "an owning "
                 "object.','type':'object','required':['apiVersion','kind','name','uid'],'"
                 "properties':{"
                 "'apiVersion':" STR("API version of the referent.") ",'blockOwnerDeletion':" BOOL(
                     "If true, AND if the owner has the foregroundDeletion finalizer, then the "
                     "owner cannot be deleted from the key-value store until this reference is "
                     "removed.") ",'controller':" BOOL("If true, this reference points to the "
                                                       "managing controller.") ",'kind':" STR("Kind"
                                                                                              " of "
                                                                                              "the "
                                                                                              "refe"
                                                                                              "rent"
                                                                                              ".") ",'name':" STR("Name of the referent.") ",'uid':" STR("UID of the referent.") "}}"},
                {"meta", "ManagedFieldsEntry",
                 "{'description':'ManagedFieldsEntry is a workflow-id, a FieldSet and the group "
                 "version of the "
                 "resource that the fieldset applies "
                 "to.','type':'object','properties':{'apiVersion':" STR("APIVersion defines the "
                                                                        "version of this resource "
                                                                        "that this field set "
                                                                        "applies to.") ",'"
                                                                                       "fieldsType'"
                                                                                       ":" STR(
                                                                                           "FieldsT"
                                                                                           "ype is "
                                                                                           "the "
                                                                                           "discrim"
                                                                                           "inator "
                                                                                           "for "
                                                                                           "the "
                                                                                           "differe"
                                                                                           "nt "
                                                                                           "fields "
                                                                                           "format "
                                                                                           "and "
                                                                                           "version"
                                                                                           ".") ",'"
                                                                                                "fi"
                                                                                                "el"
                                                                                                "ds"
                                                                                                "V1"
                                                                                                "':"
                                                                                                "{'"
                                                                                                "ty"
                                                                                                "pe"
                                                                                                "':"
                                                                                                "'o"
                                                                                                "bj"
                                                                                                "ec"
                                                                                                "t'"
                                                                                                ",'"
                                                                                                "de"
                                                                                                "sc"
                                                                                                "ri"
                                                                                                "pt"
                                                                                                "io"
                                                                                                "n'"
                                                                                                ":'"
                                                                                                "Fi"
                                                                                                "el"
                                                                                                "ds"
                                                                                                "V1"
                                                                                                " h"
                                                                                                "ol"
                                                                                                "ds"
                                                                                                " t"
                                                                                                "he"
                                                                                                " f"
                                                                                                "ir"
                                                                                                "st"
                                                                                                " J"
                                                                                                "SO"
                                                                                                "N "
                                                                                                "ve"
                                                                                                "rs"
                                                                                                "io"
                                                                                                "n "
                                                                                                "fo"
                                                                                                "rm"
                                                                                                "at"
                                                                                                " a"
                                                                                                "s "
                                                                                                "de"
                                                                                                "sc"
                                                                                                "ri"
                                                                                                "be"
                                                                                                "d "
                                                                                                "in"
                                                                                                " t"
                                                                                                "he"
                                                                                                " F"
                                                                                                "ie"
                                                                                                "ld"
                                                                                                "sV"
                                                                                                "1 "
                                                                                                "ty"
                                                                                                "pe"
                                                                                                ".'"
                                                                                                "}"
                                                                                                ",'"
                                                                                                "ma"
                                                                                                "na"
                                                                                                "ge"
                                                                                                "r'"
                                                                                                ":" STR("Manager is an identifier of the workflow managing these fields.") ",'operation':" STR("Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are Apply and Update.") ",'subresource':" STR(
                                                                                                    "Subresource is the name of the subresource used to update that object.") ",'time':" TIME("Time is the timestamp of when the ManagedFields entry was added.") "}}"},
                {"meta", "ListMeta",
                 "{'description':'ListMeta describes metadata that synthetic resources must have, "
                 "including "
                 "lists and various status objects.','type':'object','properties':{'continue':" STR(
                     "continue may be set if the user set a limit on the number of items returned.") ",'remainingItemCount':{'type':'integer','format':'int64','description':'remainingItemCount is the number of subsequent items in the list which are not included in this list response.'}"
                                                                                                     ",'resourceVersion':" STR("String that identifies the server internal version of this object.") ",'selfLink':" STR(
                                                                                                         "Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.") "}}"},
                {"meta", "Status",
                 "{'description':'Status is a return value for calls that do not return other "
                 "objects.',"
                 "'type':'object','properties':{" TYPEMETA ",'code':" INT("Suggested HTTP return "
                                                                          "code for this status, 0 "
                                                                          "if not set.") ",'"
                                                                                         "details'"
                                                                                         ":" ANYOBJ("Extended data associated with the reason.") ",'message':" STR("A human-readable description of the status of this operation.") ",'metadata':" REF(
                                                                                             "ListM"
                                                                                             "eta") ",'description':'Standard list metadata.'}"
                                                                                                    ",'reason':" STR("A machine-readable description of why this operation is in the Failure status.") ",'status':" STR(
                                                                                                        "Status of the operation. One of: Success or Failure.") "},"
                                                                                                                                                                "'x-kubernetes-group-version-kind':[{'group':'','kind':'Status','version':'v1'}]}"},
                {"meta", "Patch",
                 "{'description':'Patch is provided to give a concrete name and type to the "
                 "Kubernetes PATCH "
                 "request body.','type':'object'}"},
                {"meta", "DeleteOptions",
                 "{'description':'DeleteOptions may be provided when deleting an API "
                 "object.','type':'object',"
                 "'properties':{" TYPEMETA
                 ",'dryRun':{'type':'array','items':{'type':'string','default':''},'description':'"
                 "When present, indicates that modifications should not be persisted.'}"
                 ",'gracePeriodSeconds':{'type':'integer','format':'int64','description':'The "
                 "duration in seconds before the object should be deleted.'}"
                 ",'preconditions':" ANYOBJ("Must be fulfilled before a deletion is carried out "
                                            "(uid, resourceVersion).") ",'propagationPolicy':" STR(
                     "Whether and how garbage collection will be performed: Orphan, Background or "
                     "Foreground.") "}}"},
                {NULL, NULL, NULL},
};

static const struct builtin kinds[] =
    {
        {"", "Namespace",
         "{'description':'Namespace provides a scope for Names. Use of multiple namespaces is "
         "optional.',"
         "'type':'object','properties':{" TYPEMETA "," OBJMETA
         ",'spec':{'type':'object','description':'Spec defines the behavior of the "
         "Namespace.','properties':{'finalizers':{'type':'array','items':{'type':'string','default'"
         ":''},'description':'Finalizers is an opaque list of values that must be empty to "
         "permanently remove object from storage.'}}}"
         ",'status':{'type':'object','description':'Status describes the current status of a "
         "Namespace.','properties':{'phase':" STR("Phase is the current lifecycle phase of the "
                                                  "namespace: Active or Terminating.") ",'"
                                                                                       "conditions'"
                                                                                       ":{'type':'"
                                                                                       "array','"
                                                                                       "items'"
                                                                                       ":" ANYOBJ(
                                                                                           "Namespa"
                                                                                           "ceCondi"
                                                                                           "tion "
                                                                                           "contain"
                                                                                           "s "
                                                                                           "details"
                                                                                           " about "
                                                                                           "state "
                                                                                           "of "
                                                                                           "namespa"
                                                                                           "ce.") "}}}}}"},
        {"", "ConfigMap",
         "{'description':'ConfigMap holds configuration data for pods to consume.','type':'object',"
         "'properties':{" TYPEMETA "," OBJMETA
         ",'binaryData':{'type':'object','additionalProperties':{'type':'string','format':'byte'},'"
         "description':'BinaryData contains the binary data. Each key must consist of alphanumeric "
         "characters, -, _ or .'}"
         ",'data':" SMAP("Data contains the configuration data. Each key must consist of "
                         "alphanumeric characters, -, _ or .") ",'immutable':" BOOL(
             "Immutable, if set to true, ensures that data stored in the ConfigMap cannot be "
             "updated (only object metadata can be modified).") "}}"},
        {"", "Secret",
         "{'description':'Secret holds secret data of a certain type. The total bytes of the "
         "values in "
         "the Data field must be less than MaxSecretSize "
         "bytes.','type':'object','properties':{" TYPEMETA "," OBJMETA
         ",'data':{'type':'object','additionalProperties':{'type':'string','format':'byte'},'"
         "description':'Data contains the secret data. The serialized form of the secret data is a "
         "base64 encoded string.'}"
         ",'immutable':" BOOL(
             "Immutable, if set to true, ensures that data stored in the Secret cannot be updated "
             "(only object metadata can be modified).") ",'stringData':" SMAP("stringData allows "
                                                                              "specifying "
                                                                              "non-binary secret "
                                                                              "data in string "
                                                                              "form. It is "
                                                                              "provided as a "
                                                                              "write-only input "
                                                                              "field for "
                                                                              "convenience.") ",'"
                                                                                              "type"
                                                                                              "'"
                                                                                              ":" STR("Used to facilitate programmatic handling of secret data.") "}}"},
        {"", "ServiceAccount",
         "{'description':'ServiceAccount binds together a name, a principal that can be "
         "authenticated "
         "and a set of secrets.','type':'object','properties':{" TYPEMETA "," OBJMETA
         ",'automountServiceAccountToken':" BOOL(
             "AutomountServiceAccountToken indicates whether pods running as this service account "
             "should have an API token automatically mounted.") ",'imagePullSecrets':{'type':'"
                                                                "array','items':" ANYOBJ("LocalObje"
                                                                                         "ctReferen"
                                                                                         "ce") "}"
                                                                                               ",'"
                                                                                               "sec"
                                                                                               "ret"
                                                                                               "s':"
                                                                                               "{'"
                                                                                               "typ"
                                                                                               "e':"
                                                                                               "'ar"
                                                                                               "ray"
                                                                                               "','"
                                                                                               "ite"
                                                                                               "ms'"
                                                                                               ":" ANYOBJ(
                                                                                                   "ObjectReference") "}}}"},
        {"", "Event",
         "{'description':'Event is a report of an event somewhere in the cluster.','type':'object',"
         "'required':['metadata','involvedObject'],'properties':{" TYPEMETA "," OBJMETA
         ",'action':" STR("What action was taken/failed regarding to the Regarding object.") ",'"
                                                                                             "count"
                                                                                             "'"
                                                                                             ":" INT(
                                                                                                 "T"
                                                                                                 "h"
                                                                                                 "e"
                                                                                                 " "
                                                                                                 "n"
                                                                                                 "u"
                                                                                                 "m"
                                                                                                 "b"
                                                                                                 "e"
                                                                                                 "r"
                                                                                                 " "
                                                                                                 "o"
                                                                                                 "f"
                                                                                                 " "
                                                                                                 "t"
                                                                                                 "i"
                                                                                                 "m"
                                                                                                 "e"
                                                                                                 "s"
                                                                                                 " "
                                                                                                 "t"
                                                                                                 "h"
                                                                                                 "i"
                                                                                                 "s"
                                                                                                 " "
                                                                                                 "e"
                                                                                                 "v"
                                                                                                 "e"
                                                                                                 "n"
                                                                                                 "t"
                                                                                                 " "
                                                                                                 "h"
                                                                                                 "a"
                                                                                                 "s"
                                                                                                 " "
                                                                                                 "o"
                                                                                                 "c"
                                                                                                 "c"
                                                                                                 "u"
                                                                                                 "r"
                                                                                                 "r"
                                                                                                 "e"
                                                                                                 "d"
                                                                                                 ".") ",'eventTime':{'type':'string','format':'date-time','description':'Time when this Event was first observed.'}"
                                                                                                      ",'firstTimestamp':" TIME("The time at which the event was first recorded.") ",'involvedObject':{'type':'object','description':'The object that this event is about.','properties':{'apiVersion':" STR("API version of the referent.") ",'fieldPath':" STR("Part of an object.") ",'kind':" STR("Kind of the referent.") ",'name':" STR("Name of the referent.") ",'namespace':" STR("Namespace of the referent.") ",'resourceVersion':" STR("Specific resourceVersion to which this reference is made.") ",'uid':" STR("UID of the referent.") "}}"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      ",'lastTimestamp':" TIME("The time at which the most recent occurrence of this event was recorded.") ",'message':" STR(
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "A human-readable description of the status of this operation.") ",'reason':" STR("This should be a short, machine understandable string that gives the reason for the transition into the object current status.") ",'related':" ANYOBJ("Optional secondary object for more complex actions.") ",'reportingComponent':" STR("Name of the controller that emitted this Event.") ",'reportingInstance':" STR("ID of the controller instance.") ",'series':" ANYOBJ("Data about the Event series this event represents.") ",'source':{'type':'object','description':'The component reporting this event.','properties':{'component':" STR("Component from which the event is generated.") ",'host':" STR("Node name on which the event is generated.") "}}"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               ",'type':" STR(
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                   "Type of this event (Normal, Warning), new types could be added in the future.") "}}"},
        {"", "Service",
         "{'description':'Service is a named abstraction of software service (for example, mysql) "
         "consisting of local port (for example 3306) that the proxy listens on, and the selector "
         "that "
         "determines which pods will answer requests sent through the "
         "proxy.','type':'object','properties':{" TYPEMETA
         "," OBJMETA ",'spec':{'type':'object','description':'Spec defines the behavior of a "
                     "service.','x-kubernetes-preserve-unknown-fields':true,'properties':{'"
                     "clusterIP':" STR("clusterIP is the IP address of the service.") ",'ports':{'"
                                                                                      "type':'"
                                                                                      "array','"
                                                                                      "items':{'"
                                                                                      "type':'"
                                                                                      "object','x-"
                                                                                      "kubernetes-"
                                                                                      "preserve-"
                                                                                      "unknown-"
                                                                                      "fields':"
                                                                                      "true,'"
                                                                                      "properties':"
                                                                                      "{'name'"
                                                                                      ":" STR("The "
                                                                                              "name"
                                                                                              " of "
                                                                                              "this"
                                                                                              " por"
                                                                                              "t "
                                                                                              "with"
                                                                                              "in "
                                                                                              "the "
                                                                                              "serv"
                                                                                              "ice"
                                                                                              ".") ",'port':" INT("The port that will be exposed by this service.") ",'protocol':" STR(
                                                                                          "The IP "
                                                                                          "protocol"
                                                                                          " for "
                                                                                          "this "
                                                                                          "port.") ",'targetPort':{'x-kubernetes-int-or-string':true,'description':'Number or name of the port to access on the pods targeted by the service.'}}}}"
                                                                                                   ",'selector':" SMAP("Route service traffic to pods with label keys and values matching this selector.") ",'type':" STR(
                                                                                                       "type determines how the Service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.") "}}"
                                                                                                                                                                                                         ",'status':" ANYOBJ(
                                                                                                                                                                                                             "Most recently observed status of the service.") "}}"},
        {"", "Endpoints",
         "{'description':'Endpoints is a collection of endpoints that implement the actual "
         "service.',"
         "'type':'object','properties':{" TYPEMETA "," OBJMETA
         ",'subsets':{'type':'array','description':'The set of all endpoints is the union of all "
         "subsets.','items':" ANYOBJ(
             "EndpointSubset is a group of addresses with a common set of ports.") "}}}"},
        {"discovery.k8s.io", "EndpointSlice",
         "{'description':'EndpointSlice represents a subset of the endpoints that implement a "
         "service.',"
         "'type':'object','required':['addressType','endpoints'],'properties':{" TYPEMETA
         "," OBJMETA ",'addressType':" STR(
             "addressType specifies the type of address carried by this EndpointSlice: IPv4, IPv6 "
             "or FQDN.") ",'endpoints':{'type':'array','description':'endpoints is a list of "
                         "unique endpoints in this slice.','items':" ANYOBJ("Endpoint represents a "
                                                                            "single logical "
                                                                            "backend implementing "
                                                                            "a service.") "}"
                                                                                          ",'ports'"
                                                                                          ":{'type'"
                                                                                          ":'array'"
                                                                                          ",'"
                                                                                          "descript"
                                                                                          "ion':'"
                                                                                          "ports "
                                                                                          "specifie"
                                                                                          "s the "
                                                                                          "list of "
                                                                                          "network "
                                                                                          "ports "
                                                                                          "exposed "
                                                                                          "by each "
                                                                                          "endpoint"
                                                                                          " in "
                                                                                          "this "
                                                                                          "slice.',"
                                                                                          "'items'"
                                                                                          ":" ANYOBJ(
                                                                                              "Endp"
                                                                                              "oint"
                                                                                              "Port"
                                                                                              " rep"
                                                                                              "rese"
                                                                                              "nts "
                                                                                              "a "
                                                                                              "Port"
                                                                                              " use"
                                                                                              "d "
                                                                                              "by "
                                                                                              "an "
                                                                                              "Endp"
                                                                                              "oint"
                                                                                              "Slic"
                                                                                              "e.") "}}}"},
        {"coordination.k8s.io", "Lease",
         "{'description':'Lease defines a lease concept.','type':'object','properties':{" TYPEMETA
         "," OBJMETA ",'spec':{'type':'object','description':'spec contains the specification of "
                     "the Lease.','properties':{"
         "'acquireTime':{'type':'string','format':'date-time','description':'acquireTime is a time "
         "when the current lease was acquired.'}"
         ",'holderIdentity':" STR("holderIdentity contains the identity of the holder of a current "
                                  "lease.") ",'leaseDurationSeconds':" INT(
             "leaseDurationSeconds is a duration that candidates for a lease need to wait to force "
             "acquire it.") ",'leaseTransitions':" INT("leaseTransitions is the number of "
                                                       "transitions of a lease between holders.") ",'preferredHolder':" STR("PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.") ",'renewTime':{'type':'string','format':'date-time','description':'renewTime is a time when the current holder of a lease has last updated the lease.'}"
                                                                                                                                                                                                                                          ",'strategy':" STR(
                                                                                                                                                                                                                                              "Strategy indicates the strategy for picking the leader for coordinated leader election.") "}}}}"},
        {"storage.k8s.io", "StorageClass",
         "{'description':'StorageClass describes the parameters for a class of storage for which "
         "PersistentVolumes can be dynamically "
         "provisioned.','type':'object','required':['provisioner'],'properties':{" TYPEMETA "," OBJMETA ",'allowVolumeExpansion':" BOOL("allowVolumeExpansion shows whether the storage class allow volume expand.") ",'allowedTopologies':{'type':'array','items':" ANYOBJ(
             "A topology selector term.") "}"
                                          ",'mountOptions':{'type':'array','items':{'type':'string'"
                                          ",'default':''},'description':'mountOptions controls the "
                                          "mountOptions for dynamically provisioned "
                                          "PersistentVolumes of this storage class.'}"
                                          ",'parameters':" SMAP("parameters holds the parameters "
                                                                "for the provisioner that should "
                                                                "create volumes of this storage "
                                                                "class.") ",'provisioner':" STR("pr"
                                                                                                "ov"
                                                                                                "is"
                                                                                                "io"
                                                                                                "ne"
                                                                                                "r "
                                                                                                "in"
                                                                                                "di"
                                                                                                "ca"
                                                                                                "te"
                                                                                                "s "
                                                                                                "th"
                                                                                                "e "
                                                                                                "ty"
                                                                                                "pe"
                                                                                                " o"
                                                                                                "f "
                                                                                                "th"
                                                                                                "e "
                                                                                                "pr"
                                                                                                "ov"
                                                                                                "is"
                                                                                                "io"
                                                                                                "ne"
                                                                                                "r"
                                                                                                ".") ",'reclaimPolicy':" STR(
                                              "reclaimPolicy controls the reclaimPolicy for "
                                              "dynamically provisioned PersistentVolumes of this "
                                              "storage class: Delete or Retain.") ",'"
                                                                                  "volumeBindingMod"
                                                                                  "e':" STR("volume"
                                                                                            "Bindin"
                                                                                            "gMode "
                                                                                            "indica"
                                                                                            "tes "
                                                                                            "how "
                                                                                            "Persis"
                                                                                            "tentVo"
                                                                                            "lumeCl"
                                                                                            "aims "
                                                                                            "should"
                                                                                            " be "
                                                                                            "provis"
                                                                                            "ioned "
                                                                                            "and "
                                                                                            "bound:"
                                                                                            " Immed"
                                                                                            "iate "
                                                                                            "or "
                                                                                            "WaitFo"
                                                                                            "rFirst"
                                                                                            "Consum"
                                                                                            "er.") "}}"},
        {"apiextensions.k8s.io", "CustomResourceDefinition",
         "{'description':'CustomResourceDefinition represents a resource that should be exposed on "
         "the "
         "API server.  Its name MUST be in the format "
         "<.spec.name>.<.spec.group>.','type':'object','required':['spec'],'properties':{" TYPEMETA
         "," OBJMETA ",'spec':{'type':'object','description':'spec describes how the user wants "
                     "the resources to "
                     "appear','x-kubernetes-preserve-unknown-fields':true,'required':['group','"
                     "names','scope','versions'],'properties':{"
         "'group':" STR("group is the API group of the defined custom resource.") ",'names'"
                                                                                  ":" ANYOBJ("names"
                                                                                             " spec"
                                                                                             "ify "
                                                                                             "the "
                                                                                             "resou"
                                                                                             "rce "
                                                                                             "and "
                                                                                             "kind "
                                                                                             "names"
                                                                                             " for "
                                                                                             "the "
                                                                                             "custo"
                                                                                             "m "
                                                                                             "resou"
                                                                                             "rce.") ",'scope':" STR("scope indicates whether the defined custom resource is cluster- or namespace-scoped: Cluster or Namespaced.") ",'versions':{'type':'array','description':'versions is the list of all API versions of the defined custom resource.','items':" ANYOBJ(
                                                                                      "CustomResour"
                                                                                      "ceDefinition"
                                                                                      "Version "
                                                                                      "describes a "
                                                                                      "version for "
                                                                                      "CRD.") "}"
                                                                                              ",'"
                                                                                              "conv"
                                                                                              "ersi"
                                                                                              "on'"
                                                                                              ":" ANYOBJ("conversion defines conversion settings for the CRD.") ",'preserveUnknownFields':" BOOL("preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage.") "}}"
                                                                                                                                                                                                                                                                                                                                                     ",'status':" ANYOBJ(
                                                                                                                                                                                                                                                                                                                                                         "status indicates the actual state of the CustomResourceDefinition") "}}"},
        {NULL, NULL, NULL},
};

static cJSON *parse_quoted(const char *src)
{
    size_t n = strlen(src);
    char *s = malloc(n + 1);
    cJSON *j;
    if (!s)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        s[i] = src[i] == '\'' ? '"' : src[i];
    j = cJSON_Parse(s);
    free(s);
    return j;
}

cJSON *as_openapi_builtin_schema(const char *group, const char *kind)
{
    for (int i = 0; kinds[i].kind; i++)
        if (!strcmp(kinds[i].group, group ? group : "") && !strcmp(kinds[i].kind, kind))
            return parse_quoted(kinds[i].json);
    return NULL;
}

int as_openapi_add_meta_components(cJSON *schemas)
{
    for (int i = 0; meta_types[i].kind; i++) {
        char name[128];
        cJSON *s;
        snprintf(name, sizeof(name), "io.k8s.apimachinery.pkg.apis.meta.v1.%s", meta_types[i].kind);
        if (cJSON_GetObjectItemCaseSensitive(schemas, name))
            continue;
        s = parse_quoted(meta_types[i].json);
        if (!s)
            return -1;
        cJSON_AddItemToObject(schemas, name, s);
    }
    return 0;
}
/* clang-format on */
